#!/usr/bin/python3
"""A local stand-in for cloud metadata services, answering as one vendor at a time with that
vendor's documented paths and headers, and refusing what the real service refuses (AWS wants
an IMDSv2 token, GCP the Metadata-Flavor header, Azure the Metadata header, Alibaba its own
token header). Special modes: `garbage` (200 and junk for everything), `silent` (accepts
connections and never answers), `brokenhttp` (answers that are not well-formed HTTP: no status
line, bad chunks, bodies cut short, a flood of headers, a body of 10 MB, taking turns), `openstack` (an OpenStack cloud that is not OVH, with an
EC2-compatible API that has no AWS services domain).

    metadata_server.py MODE [COUNT_FILE]

Listens on 127.0.0.1, a free port, printed on stdout. COUNT_FILE, if given, gets the number of
requests served, rewritten after each one.
"""
import http.server
import json
import socket
import socketserver
import sys
import threading
import time

MODE = sys.argv[1]
COUNT_FILE = sys.argv[2] if len(sys.argv) > 2 else None
TOKEN = "AQAEAExampleTokenValue=="
count = 0
lock = threading.Lock()

AWS_DOC = {"accountId": "123456789012", "architecture": "x86_64", "availabilityZone": "eu-central-1b",
           "imageId": "ami-0abcdef1234567890", "instanceId": "i-0123456789abcdef0", "instanceType": "g4dn.xlarge",
           "pendingTime": "2026-11-20T10:00:00Z", "privateIp": "10.0.0.12", "region": "eu-central-1", "version": "2017-09-30"}


def aws(h):
    if h.command == "PUT" and h.path == "/latest/api/token":
        ttl = h.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        if not ttl or not ttl.isdigit():
            return 400, {}, "missing or invalid TTL header"
        return 200, {}, TOKEN
    if h.headers.get("X-aws-ec2-metadata-token") != TOKEN:
        return 401, {}, "Unauthorized"
    paths = {"/latest/meta-data/services/domain": "amazonaws.com",
             "/latest/dynamic/instance-identity/document": json.dumps(AWS_DOC, indent=2),
             "/latest/meta-data/instance-type": "g4dn.xlarge", "/latest/meta-data/placement/region": "eu-central-1",
             "/latest/meta-data/placement/availability-zone": "eu-central-1b"}
    return (200, {}, paths[h.path]) if h.path in paths else (404, {}, "Not Found")


def gcp(h):
    if h.headers.get("Metadata-Flavor") != "Google":
        return 403, {}, "Missing Metadata-Flavor:Google header."
    paths = {"/computeMetadata/v1/instance/zone": "projects/424242424242/zones/europe-west4-a",
             "/computeMetadata/v1/instance/machine-type": "projects/424242424242/machineTypes/n2-standard-8",
             "/computeMetadata/v1/project/project-id": "my-ml-project"}
    return (200, {"Metadata-Flavor": "Google"}, paths[h.path]) if h.path in paths else (404, {"Metadata-Flavor": "Google"}, "")


def azure(h):
    if h.headers.get("Metadata") != "true":
        return 400, {}, json.dumps({"error": "Bad request. Required metadata header not specified"})
    if h.path.startswith("/metadata/instance?") and "api-version=" in h.path:
        doc = {"compute": {"azEnvironment": "AzurePublicCloud", "location": "westeurope", "name": "vm1",
                           "subscriptionId": "8d10da13-8125-4ba9-a717-bf7490507b3d", "vmId": "02aab8a4-74ef-476e",
                           "vmSize": "Standard_NC6s_v3", "zone": "2"},
               "network": {"interface": []}}
        return 200, {"Content-Type": "application/json; charset=utf-8"}, json.dumps(doc)
    return 404, {}, ""


def hcloud(h):
    if h.path == "/hetzner/v1/metadata":
        return 200, {}, ("availability-zone: fsn1-dc14\nhostname: trainer-1\ninstance-id: 42424242\n"
                         "local-ipv4: ''\npublic-ipv4: 203.0.113.7\nregion: eu-central\npublic-keys: []\n")
    return 404, {}, ""


def upcloud(h):
    if h.path == "/metadata/v1.json":
        return 200, {"Content-Type": "application/json"}, json.dumps(
            {"cloud_name": "upcloud", "instance_id": "00abcdef-1234-5678-9abc-def012345678", "hostname": "worker",
             "platform": "servers", "region": "fi-hel2", "public_keys": []})
    return 404, {}, ""


def alicloud(h):
    if h.command == "PUT" and h.path == "/latest/api/token":
        if not h.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds"):
            return 400, {}, "missing TTL header"
        return 200, {}, TOKEN
    if h.headers.get("X-aliyun-ecs-metadata-token") != TOKEN:
        return 403, {}, "Forbidden: security hardening mode"
    paths = {"/latest/meta-data/region-id": "cn-hangzhou", "/latest/meta-data/zone-id": "cn-hangzhou-h",
             "/latest/meta-data/instance/instance-type": "ecs.gn6i-c4g1.xlarge",
             "/latest/meta-data/owner-account-id": "1234567890123456"}
    return (200, {}, paths[h.path]) if h.path in paths else (404, {}, "")


def openstack(h, dns):
    if h.path == "/openstack/latest/network_data.json":
        return 200, {}, json.dumps({"links": [], "networks": [], "services": [{"type": "dns", "address": dns}]})
    if h.path == "/openstack/latest/meta_data.json":
        return 200, {}, json.dumps({"uuid": "d8e02d56-2648-49a3-bf97-6be8f1204f38", "name": "gpu-node",
                                    "availability_zone": "GRA11", "project_id": "0123456789abcdef0123456789abcdef",
                                    "hostname": "gpu-node.novalocal"})
    if h.path == "/latest/meta-data/instance-type":
        return 200, {}, "t2-45"
    if h.path == "/latest/meta-data/placement/availability-zone":
        return 200, {}, "GRA11"
    return 404, {}, ""


def vultr(h):
    if h.path == "/v1.json":
        return 200, {}, json.dumps({"bgp": {}, "hostname": "vultr-guest", "instanceid": "a1b2c3d4",
                                    "instance-v2-id": "3d7fe5b1-6e5f-4f2f-9d3a-0b0b0b0b0b0b",
                                    "region": {"regioncode": "AMS"}, "public-keys": []})
    return 404, {}, ""


def garbage(h):
    return 200, {"Metadata-Flavor": "Goggle"}, "\x00\xff<html>oops { not json \x07" * 3


HANDLERS = {"aws": aws, "gcp": gcp, "azure": azure, "hcloud": hcloud, "upcloud": upcloud, "alicloud": alicloud,
            "ovh": lambda h: openstack(h, "213.186.33.99"), "openstack": lambda h: openstack(h, "10.0.0.2"),
            "vultr": vultr, "garbage": garbage}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        global count
        with lock:
            count += 1
            if COUNT_FILE:
                with open(COUNT_FILE, "w") as f:
                    f.write(str(count))
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        status, headers, body = HANDLERS[MODE](self)
        data = body.encode("latin-1")
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_PUT = answer

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def silent():
    """Accepts connections and reads requests, but never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    print(s.getsockname()[1], flush=True)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)  # keep it open, say nothing


BROKEN = [
    b"this is not http at all\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nnot a chunk\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\nshort\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",
    b"HTTP/1.1 200 OK\r\n" + b"X-Flood: yes\r\n" * 5000 + b"\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 10485760\r\n\r\n" + b"a" * 10485760,
    b"HTTP/9 999999 What\r\n\r\n",
    b"\x00\xff\xfe" * 1000,
]


def brokenhttp():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    print(s.getsockname()[1], flush=True)
    global count
    while True:
        c, _ = s.accept()
        try:
            c.settimeout(2)
            c.recv(65536)
            c.sendall(BROKEN[count % len(BROKEN)])
        except OSError:
            pass
        count += 1
        if COUNT_FILE:
            with open(COUNT_FILE, "w") as f:
                f.write(str(count))
        c.close()


if __name__ == "__main__":
    if MODE == "silent":
        silent()
    if MODE == "brokenhttp":
        brokenhttp()
    srv = Server(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
