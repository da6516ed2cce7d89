"""keeper.keeper_request against a small recording HTTP stand-in on 127.0.0.1 (port 0): the
JSON reply of a path under TRACKER_KEEPER_URL or an explicit endpoint, with the Keeper's
headers; None for an error status, a reply that is not JSON, a closed port; and with
TRACKER_KEEPER_URL=off no request at all."""
import http.server
import json
import socket
import threading

import pytest

from resource_tracker.keeper import keeper_request


@pytest.fixture
def keeper():
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            if self.path.endswith("/healthcheck"):
                status, body = 200, json.dumps({"packages": {"sparecores-data": "0.3"}}).encode()
            elif self.path.endswith("/prices"):
                status, body = 200, json.dumps([{"region_id": "r", "price": 0.5}]).encode()
            elif self.path.endswith("/text"):
                status, body = 200, b"not json"
            else:
                status, body = 404, b'{"detail": "Not Found"}'
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_keeper_request(keeper, monkeypatch):
    url, seen = keeper
    monkeypatch.setenv("TRACKER_KEEPER_URL", url + "/")
    assert keeper_request("/healthcheck") == {"packages": {"sparecores-data": "0.3"}}
    assert keeper_request("server/aws/t3.micro/prices") == [{"region_id": "r", "price": 0.5}]
    path, headers = seen[0]
    assert path == "/healthcheck"
    assert headers["x-application-id"] == "resource-tracker" and headers["accept"] == "application/json"
    assert seen[1][0] == "/server/aws/t3.micro/prices"
    assert keeper_request("/missing") is None       # an error status
    assert keeper_request("/text") is None          # not JSON
    # an explicit endpoint wins over the variable; a base path is kept
    monkeypatch.setenv("TRACKER_KEEPER_URL", "http://127.0.0.1:9")
    assert keeper_request("/healthcheck", endpoint=url + "/api") is not None
    assert seen[-1][0] == "/api/healthcheck"


def test_keeper_request_off_and_down(keeper, monkeypatch):
    url, seen = keeper
    for off in ("off", "OFF"):
        monkeypatch.setenv("TRACKER_KEEPER_URL", off)
        assert keeper_request("/healthcheck") is None
        assert keeper_request("/healthcheck", endpoint=url) is None
    assert seen == []  # nothing asked
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    monkeypatch.setenv("TRACKER_KEEPER_URL", closed)
    assert keeper_request("/healthcheck", timeout=5) is None
