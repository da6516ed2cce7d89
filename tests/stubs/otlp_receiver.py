#!/usr/bin/python3
"""A strict stand-in for an OpenTelemetry collector's OTLP/HTTP metrics receiver (JSON encoding),
written by hand from the OTLP specification: standard library only.

    otlp_receiver.py --log FILE [--fail N] [--fail-status CODE] [--retry-after VALUE]
                     [--hang N] [--require-header NAME=VALUE] [--partial N]

Listens on 127.0.0.1, a free port, printed on stdout (one line). Stop it by its PID.

Only POST /v1/metrics (another path 404, another method 405). The body is gunzipped when
Content-Encoding is gzip (another encoding: 415); Content-Type must be application/json (415).
The body must be an ExportMetricsServiceRequest in OTLP's protobuf-JSON mapping, checked strictly;
any violation is answered 400 with the reason as text:
  - only the message's own field names, in lowerCamelCase (time_unix_nano or an unknown field: 400);
  - 64-bit integers (timeUnixNano, startTimeUnixNano, asInt, intValue) as strings of decimal digits;
  - timeUnixNano present on every data point and plausible (after 2001, before now + 1 day);
    startTimeUnixNano, when present, not after it; present on every point of a cumulative sum;
  - a metric has a name (OpenTelemetry's syntax) and exactly one of gauge/sum/histogram/
    exponentialHistogram/summary; a sum has aggregationTemporality (1 or 2, an integer) and
    isMonotonic (a boolean); a number data point has exactly one of asDouble (a finite number)
    and asInt;
  - attributes are lists of KeyValue {key, value} whose value is an AnyValue with exactly one of
    stringValue, boolValue, intValue, doubleValue, arrayValue, kvlistValue, bytesValue; keys are
    not repeated within one list.
Accepted: 200 {} (or a partialSuccess rejecting N points with --partial N).

Fault modes (counted over POST /v1/metrics requests that reach the handler):
    --fail N            the first N requests are answered --fail-status (default 503), with
                        Retry-After: VALUE when --retry-after is given (seconds or an HTTP-date)
    --hang N            the first N requests are read, then never answered (the connection stays
                        open until the server is stopped)
    --require-header NAME=VALUE   a request without that header (value exact) is answered 401

Log (--log FILE): one JSON line per request, appended and flushed at once:
    {"t": Unix time of arrival, "mono": monotonic time of arrival, "method", "path",
     "status": the status answered (null while hung), "error": why it was refused or null,
     "encoding": Content-Encoding, "headers": the lower-cased names of the request headers,
     "json": the parsed request when it was accepted (else null)}
"""
import argparse
import gzip
import http.server
import json
import math
import re
import socketserver
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--log", required=True)
ap.add_argument("--fail", type=int, default=0)
ap.add_argument("--fail-status", type=int, default=503)
ap.add_argument("--retry-after", default=None)
ap.add_argument("--hang", type=int, default=0)
ap.add_argument("--require-header", default=None)
ap.add_argument("--partial", type=int, default=0)
ARGS = ap.parse_args()

lock = threading.Lock()
count = 0
log_file = open(ARGS.log, "a", buffering=1)

DIGITS = re.compile(r"^-?[0-9]+$")
METRIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-/]{0,254}$")
MIN_NS = 978307200 * 10**9  # 2001-01-01


class Invalid(Exception):
    pass


def need(cond, why):
    if not cond:
        raise Invalid(why)


def fields(obj, where, allowed, required=()):
    need(isinstance(obj, dict), f"{where}: not an object")
    for k in obj:
        need(k in allowed, f"{where}: unknown field {k!r}")
    for k in required:
        need(k in obj, f"{where}: missing {k}")


def int64(v, where, unsigned=False):
    need(isinstance(v, str) and DIGITS.match(v), f"{where}: a 64-bit integer must be a string of digits, not {v!r}")
    n = int(v)
    need((0 if unsigned else -2**63) <= n < (2**64 if unsigned else 2**63), f"{where}: out of range")
    return n


def any_value(v, where):
    kinds = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue")
    fields(v, where, kinds)
    need(len(v) == 1, f"{where}: an AnyValue needs exactly one value field, has {sorted(v)}")
    (k, x), = v.items()
    if k == "stringValue" or k == "bytesValue":
        need(isinstance(x, str), f"{where}.{k}: not a string")
    elif k == "boolValue":
        need(isinstance(x, bool), f"{where}.{k}: not a boolean")
    elif k == "intValue":
        int64(x, f"{where}.intValue")
    elif k == "doubleValue":
        need(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x),
             f"{where}.doubleValue: not a number")
    elif k == "arrayValue":
        fields(x, f"{where}.arrayValue", ("values",))
        need(isinstance(x.get("values", []), list), f"{where}.arrayValue.values: not a list")
        for i, e in enumerate(x.get("values", [])):
            any_value(e, f"{where}.arrayValue.values[{i}]")
    else:
        fields(x, f"{where}.kvlistValue", ("values",))
        attributes(x.get("values", []), f"{where}.kvlistValue.values")


def attributes(lst, where):
    need(isinstance(lst, list), f"{where}: not a list")
    seen = set()
    for i, kv in enumerate(lst):
        w = f"{where}[{i}]"
        fields(kv, w, ("key", "value"), ("key", "value"))
        need(isinstance(kv["key"], str) and kv["key"], f"{w}.key: not a non-empty string")
        need(kv["key"] not in seen, f"{w}: key {kv['key']!r} repeated")
        seen.add(kv["key"])
        any_value(kv["value"], f"{w}.value")


def data_point(p, where, cumulative):
    fields(p, where, ("attributes", "startTimeUnixNano", "timeUnixNano", "asDouble", "asInt", "exemplars", "flags"),
           ("timeUnixNano",))
    attributes(p.get("attributes", []), f"{where}.attributes")
    t = int64(p["timeUnixNano"], f"{where}.timeUnixNano", unsigned=True)
    need(MIN_NS <= t <= (time.time() + 86400) * 1e9, f"{where}.timeUnixNano: implausible {t}")
    if cumulative:
        need("startTimeUnixNano" in p, f"{where}: a cumulative point needs startTimeUnixNano")
    if "startTimeUnixNano" in p:
        s = int64(p["startTimeUnixNano"], f"{where}.startTimeUnixNano", unsigned=True)
        need(MIN_NS <= s <= t, f"{where}.startTimeUnixNano: {s} not in [2001, timeUnixNano]")
    vals = [k for k in ("asDouble", "asInt") if k in p]
    need(len(vals) == 1, f"{where}: a number data point needs exactly one of asDouble, asInt; has {vals}")
    if "asInt" in p:
        int64(p["asInt"], f"{where}.asInt")
    else:
        x = p["asDouble"]
        need(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x),
             f"{where}.asDouble: not a finite number: {x!r}")


def metric(m, where):
    data = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")
    fields(m, where, ("name", "description", "unit", "metadata") + data, ("name",))
    need(isinstance(m["name"], str) and METRIC_NAME.match(m["name"]), f"{where}.name: not a metric name")
    for k in ("description", "unit"):
        need(isinstance(m.get(k, ""), str), f"{where}.{k}: not a string")
    kinds = [k for k in data if k in m]
    need(len(kinds) == 1, f"{where}: needs exactly one of {data}, has {kinds}")
    kind = kinds[0]
    need(kind in ("gauge", "sum"), f"{where}: {kind} is not expected from this exporter")
    body = m[kind]
    w = f"{where}.{kind}"
    if kind == "gauge":
        fields(body, w, ("dataPoints",), ("dataPoints",))
        cumulative = False
    else:
        fields(body, w, ("dataPoints", "aggregationTemporality", "isMonotonic"),
               ("dataPoints", "aggregationTemporality", "isMonotonic"))
        at = body["aggregationTemporality"]
        need(isinstance(at, int) and not isinstance(at, bool) and at in (1, 2),
             f"{w}.aggregationTemporality: must be the integer 1 or 2, not {at!r}")
        need(isinstance(body["isMonotonic"], bool), f"{w}.isMonotonic: not a boolean")
        cumulative = at == 2
    need(isinstance(body["dataPoints"], list) and body["dataPoints"], f"{w}.dataPoints: not a non-empty list")
    for i, p in enumerate(body["dataPoints"]):
        data_point(p, f"{w}.dataPoints[{i}]", cumulative)
    return sum(1 for _ in body["dataPoints"])


def validate(req):
    """Raises Invalid with the reason; returns the number of data points."""
    fields(req, "request", ("resourceMetrics",), ("resourceMetrics",))
    need(isinstance(req["resourceMetrics"], list), "resourceMetrics: not a list")
    points = 0
    for i, rm in enumerate(req["resourceMetrics"]):
        w = f"resourceMetrics[{i}]"
        fields(rm, w, ("resource", "scopeMetrics", "schemaUrl"))
        fields(rm.get("resource", {}), f"{w}.resource", ("attributes", "droppedAttributesCount"))
        attributes(rm.get("resource", {}).get("attributes", []), f"{w}.resource.attributes")
        need(isinstance(rm.get("scopeMetrics", []), list), f"{w}.scopeMetrics: not a list")
        for j, sm in enumerate(rm.get("scopeMetrics", [])):
            ws = f"{w}.scopeMetrics[{j}]"
            fields(sm, ws, ("scope", "metrics", "schemaUrl"))
            fields(sm.get("scope", {}), f"{ws}.scope", ("name", "version", "attributes", "droppedAttributesCount"))
            need(isinstance(sm.get("metrics", []), list), f"{ws}.metrics: not a list")
            names = set()
            for k, m in enumerate(sm.get("metrics", [])):
                points += metric(m, f"{ws}.metrics[{k}]")
                need(m["name"] not in names, f"{ws}.metrics[{k}]: metric {m['name']} repeated in one scope")
                names.add(m["name"])
    return points


def no_constants(name):
    raise ValueError(f"{name} is not JSON")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def record(self, entry):
        with lock:
            log_file.write(json.dumps(entry) + "\n")
            log_file.flush()

    def answer(self, entry, status, text, headers=()):
        entry["status"] = status
        self.record(entry)
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, entry, status, why):
        entry["error"] = why
        self.answer(entry, status, why)

    def do_GET(self):
        self.other()

    def do_PUT(self):
        self.other()

    def other(self):
        entry = self.entry()
        self.read_body()
        self.refuse(entry, 404 if self.path != "/v1/metrics" else 405, "only POST /v1/metrics")

    def entry(self):
        return {"t": time.time(), "mono": time.monotonic(), "method": self.command, "path": self.path,
                "status": None, "error": None, "encoding": self.headers.get("Content-Encoding"),
                "headers": sorted(k.lower() for k in self.headers.keys()), "json": None}

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def do_POST(self):
        global count
        entry = self.entry()
        raw = self.read_body()
        if self.path != "/v1/metrics":
            return self.refuse(entry, 404, "only POST /v1/metrics")
        with lock:
            k = count
            count += 1
        if k < ARGS.hang:
            entry["hung"] = True
            self.record(entry)
            while True:  # never answered; the server is stopped by its pid
                time.sleep(3600)
        if ARGS.require_header:
            name, _, value = ARGS.require_header.partition("=")
            if self.headers.get(name) != value:
                return self.refuse(entry, 401, f"missing or wrong {name}")
        if k < ARGS.fail:
            extra = [("Retry-After", ARGS.retry_after)] if ARGS.retry_after is not None else []
            entry["error"] = f"fault mode: answer {ARGS.fail_status}"
            return self.answer(entry, ARGS.fail_status, "try later", extra)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return self.refuse(entry, 415, f"Content-Type {ctype!r}: only application/json is taken here")
        enc = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if enc == "gzip":
            try:
                raw = gzip.decompress(raw)
            except Exception as e:  # noqa: BLE001 - any failure is the client's
                return self.refuse(entry, 400, f"Content-Encoding gzip, but the body does not gunzip: {e}")
        elif enc != "identity":
            return self.refuse(entry, 415, f"Content-Encoding {enc!r} not supported")
        try:
            req = json.loads(raw.decode("utf-8"), parse_constant=no_constants)
        except Exception as e:  # noqa: BLE001
            return self.refuse(entry, 400, f"not JSON: {e}")
        try:
            points = validate(req)
        except Invalid as e:
            return self.refuse(entry, 400, str(e))
        entry["json"] = req
        entry["points"] = points
        reply = {}
        if ARGS.partial:
            reply = {"partialSuccess": {"rejectedDataPoints": str(ARGS.partial), "errorMessage": "stand-in refusal"}}
        self.answer(entry, 200, json.dumps(reply))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
