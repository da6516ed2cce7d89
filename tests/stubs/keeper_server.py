#!/usr/bin/python3
"""A local stand-in for the Spare Cores Keeper API (docs/contracts.md §6) with a small catalog,
strict about what the tracker may send: the X-Application-ID header, known parameter names only,
each once, numeric values, memory_min, gpu_memory_min and gpu_memory_total in GB (Keeper's GB is
a GiB: it compares memory_amount >= GB * 1024, memory_amount in MiB; gpu_memory_min is the
server's smallest GPU's, gpu_memory_total all its GPUs') -- a value larger than the largest
server's memory in GB can only be MiB and is refused with 422, as is anything else unexpected.

    keeper_server.py [--stall] [--log FILE]

Listens on 127.0.0.1, a free port, printed on stdout. --log FILE: every request received is
appended to a JSON list in FILE (rewritten after each request): method, path, query (name ->
list of values), headers. --stall: accepts connections, reads the request, never answers.
"Keeper down" needs no mode: a closed port (bind a socket, note its port, close it).

    GET /servers?vcpus_min=&memory_min=&gpu_min=&gpu_memory_min=&gpu_memory_total=&order_by=&order_dir=&limit=
    GET /server/{vendor}/{server}/prices      (server: the server id or API reference)
"""
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

STALL = "--stall" in sys.argv
LOG = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
lock = threading.Lock()
seen = []


def server(vendor, api_ref, name, vcpus, mem_mib, gpus, gpu_mem_mib, price, cpu=(None, None, None)):
    """cpu: Keeper's cpu_manufacturer, cpu_family and cpu_model of the primary CPU ("Intel", "Xeon",
    "8375C": the model is the model number, the family the product line), each null when unknown."""
    return {"vendor_id": vendor, "server_id": api_ref, "name": api_ref, "api_reference": api_ref,
            "display_name": name, "description": None, "family": None, "vcpus": vcpus, "hypervisor": "KVM",
            "cpu_allocation": "Dedicated", "cpu_cores": vcpus, "cpu_manufacturer": cpu[0], "cpu_family": cpu[1],
            "cpu_model": cpu[2], "memory_amount": mem_mib, "gpu_count": gpus, "gpu_memory_min": gpu_mem_mib // gpus if gpus else None,
            "gpu_memory_total": gpu_mem_mib if gpus else None, "status": "active",
            "min_price": round(price * 0.4, 6), "min_price_spot": round(price * 0.4, 6),
            "min_price_ondemand": price, "vendor": {"vendor_id": vendor, "name": vendor.upper()}}


# CPUs: some in the tracker's TDP table (data/cpu-tdp.csv: Platinum 8259CL, 8175M, EPYC 7543,
# 7B12, 7R32), some not (a Xeon 8273CL, a Skylake without a model number)
CATALOG = [
    server("aws", "t3.micro", "t3.micro", 2, 1024, 0, 0, 0.0104, ("Intel", "Xeon", "8259CL")),
    server("hcloud", "cx22", "CX22", 2, 4096, 0, 0, 0.006, ("Intel", "Xeon", None)),
    server("upcloud", "DEV-2xCPU-3GB", "Developer 2xCPU-3GB", 2, 3072, 0, 0, 0.0052, ("AMD", "EPYC", "7543")),
    server("aws", "t3.medium", "t3.medium", 2, 4096, 0, 0, 0.0416, ("Intel", "Xeon", "8175M")),
    server("gcp", "e2-standard-4", "e2-standard-4", 4, 16384, 0, 0, 0.134, ("AMD", "EPYC", "7B12")),
    server("aws", "m5.xlarge", "m5.xlarge", 4, 16384, 0, 0, 0.192, ("Intel", "Xeon", "8259CL")),
    server("aws", "g4dn.xlarge", "g4dn.xlarge", 4, 16384, 1, 15360, 0.526, ("Intel", "Xeon", "8259CL")),
    server("gcp", "g2-standard-4", "g2-standard-4", 4, 16384, 1, 24576, 0.7069, ("Intel", "Xeon", "8273CL")),
    server("aws", "g5.12xlarge", "g5.12xlarge", 48, 196608, 4, 98304, 5.672, ("AMD", "EPYC", "7R32")),
    # one GPU each, for the GPU ask: an L40S (46068 MiB as nvidia-smi shows it), an A100 40GB, an H200
    server("aws", "g6e.xlarge", "g6e.xlarge", 4, 32768, 1, 46068, 1.861, ("AMD", "EPYC", "7R13")),
    server("gcp", "a2-highgpu-1g", "a2-highgpu-1g", 12, 87040, 1, 40960, 3.6734, ("Intel", "Xeon", "8273CL")),
    server("nebius", "gpu-h200x1", "1 H200, 16 vCPUs", 16, 204800, 1, 143771, 4.5, ("Intel", "Xeon", "8468")),
]
MAX_MEM_GB = max(s["memory_amount"] for s in CATALOG) / 1024
MAX_VRAM_GB = max(s["gpu_memory_total"] or 0 for s in CATALOG) / 1024
MAX_GPU_GB = max(s["gpu_memory_min"] or 0 for s in CATALOG) / 1024
REGIONS = [("us-east-1", "use1-az1", 1.0), ("eu-central-1", "euc1-az2", 1.15), ("ap-south-1", "aps1-az1", 1.05)]


def prices_of(s):
    out = []
    for region, zone, factor in REGIONS:
        for alloc, os_, f in (("ondemand", "Linux", 1.0), ("spot", "Linux", 0.35), ("ondemand", "Windows", 1.8)):
            out.append({"vendor_id": s["vendor_id"], "region_id": region, "zone_id": zone,
                        "server_id": s["server_id"], "operating_system": os_, "allocation": alloc,
                        "unit": "hour", "price": round(s["min_price_ondemand"] * factor * f, 6),
                        "price_upfront": 0.0, "price_tiered": [], "currency": "USD", "status": "active"})
    return out


def number(q, name, integer=False, lo=None, hi=None):
    """The single value of parameter name as a number, or raises ValueError why not."""
    v = q[name]
    if len(v) != 1:
        raise ValueError(f"{name} given {len(v)} times")
    try:
        x = int(v[0]) if integer else float(v[0])
    except ValueError:
        raise ValueError(f"{name}: not a{'n integer' if integer else ' number'}: {v[0]!r}")
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"{name}: not a finite number")
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise ValueError(f"{name}: {x} out of range")
    return x


def search(q):
    known = {"vcpus_min", "memory_min", "gpu_min", "gpu_memory_min", "gpu_memory_total", "order_by", "order_dir",
             "limit"}
    unknown = set(q) - known
    if unknown:
        raise ValueError(f"unknown parameters: {sorted(unknown)}")
    for k, v in q.items():
        if len(v) != 1:
            raise ValueError(f"{k} given {len(v)} times")
    vcpus = number(q, "vcpus_min", integer=True, lo=1, hi=256) if "vcpus_min" in q else 1
    mem = number(q, "memory_min", lo=0) if "memory_min" in q else None
    if mem is not None and mem > MAX_MEM_GB:
        raise ValueError(f"memory_min={mem} GB is more than any server has: MiB sent as GB?")
    gpus = number(q, "gpu_min", lo=0) if "gpu_min" in q else None
    vram = number(q, "gpu_memory_total", lo=0) if "gpu_memory_total" in q else None
    if vram is not None and vram > MAX_VRAM_GB:
        raise ValueError(f"gpu_memory_total={vram} GB is more than any server has: MiB sent as GB?")
    if vram is not None and not gpus:
        raise ValueError("gpu_memory_total without gpu_min")
    one = number(q, "gpu_memory_min", lo=0) if "gpu_memory_min" in q else None
    if one is not None and one > MAX_GPU_GB:
        raise ValueError(f"gpu_memory_min={one} GB is more than any GPU has: MiB sent as GB?")
    if one is not None and not gpus:
        raise ValueError("gpu_memory_min without gpu_min")
    order_by = q.get("order_by", ["min_price"])[0]
    if order_by != "min_price_ondemand":
        raise ValueError(f"order_by={order_by!r}: this stand-in orders by min_price_ondemand only")
    order_dir = q.get("order_dir", ["asc"])[0]
    if order_dir not in ("asc", "desc"):
        raise ValueError(f"order_dir={order_dir!r}")
    limit = number(q, "limit", integer=True, lo=-1) if "limit" in q else 25
    out = [s for s in CATALOG
           if s["vcpus"] >= vcpus
           and (not mem or s["memory_amount"] >= mem * 1024)
           and (not gpus or s["gpu_count"] >= gpus)
           and (not vram or (s["gpu_memory_total"] or 0) >= vram * 1024)
           and (not one or (s["gpu_memory_min"] or 0) >= one * 1024)]
    out.sort(key=lambda s: s["min_price_ondemand"], reverse=order_dir == "desc")
    return out if limit == -1 else out[:limit]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query, keep_blank_values=True, strict_parsing=False)
        with lock:
            seen.append({"method": "GET", "path": url.path, "query": q, "raw_query": url.query,
                         "headers": {k: v for k, v in self.headers.items()}})
            if LOG:
                with open(LOG + ".tmp", "w") as f:
                    json.dump(seen, f)
                os.replace(LOG + ".tmp", LOG)
        if STALL:
            while True:
                time.sleep(3600)
        if self.headers.get("X-Application-ID") != "resource-tracker":
            return self.reply(400, {"detail": "X-Application-ID: resource-tracker is required"})
        if url.path == "/servers":
            try:
                return self.reply(200, search(q))
            except ValueError as e:
                return self.reply(422, {"detail": [{"msg": str(e)}]})
        parts = url.path.split("/")
        if len(parts) == 5 and parts[0] == "" and parts[1] == "server" and parts[4] == "prices":
            if q:
                return self.reply(422, {"detail": [{"msg": f"unexpected parameters {sorted(q)}"}]})
            vendor, srv = urllib.parse.unquote(parts[2]), urllib.parse.unquote(parts[3])
            for s in CATALOG:
                if s["vendor_id"] == vendor and srv in (s["server_id"], s["api_reference"]):
                    return self.reply(200, prices_of(s))
            return self.reply(404, {"detail": "Server not found"})
        return self.reply(404, {"detail": "Not Found"})

    def do_POST(self):
        self.reply(405, {"detail": "Method Not Allowed"})


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
