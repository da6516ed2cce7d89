#!/usr/bin/python3
"""export_tool.py - what the exporters cost the real tool: the tracker's own CPU (every thread,
from wait4's rusage) per sample at -i 0.1 over SECS seconds of `sleep`, plain and with each
exporter on: --prometheus scraped once a second, --prometheus-textfile, --otlp to the local
strict receiver (tests/stubs/otlp_receiver.py) every second, and all of them; and the peak RSS
(ru_maxrss). Prints figures; asserts nothing.
    bench/export_tool.py BUILD_DIR [SECS]"""
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
TOOL = os.path.join(BUILD, "resource-tracker")
HERE = os.path.dirname(os.path.abspath(__file__))
RECEIVER = os.path.join(HERE, "..", "tests", "stubs", "otlp_receiver.py")
ENV = dict(os.environ, TRACKER_CLOUD_DISCOVERY="0")


def run(extra, scrape=False):
    """The tool with extra flags for SECS seconds: (CPU seconds, samples, max RSS KiB)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.jsonl")
        p = subprocess.Popen([TOOL, "-i", "0.1", "-o", out] + extra + ["--", "sleep", str(SECS)],
                             stderr=subprocess.PIPE, text=True, env=ENV)
        stop = threading.Event()
        if scrape:
            line = p.stderr.readline()  # "serving Prometheus metrics at http://127.0.0.1:PORT/metrics"
            url = line.strip().rsplit(" ", 1)[-1]

            def scraper():
                while not stop.wait(1.0):
                    try:
                        urllib.request.urlopen(url, timeout=5).read()
                    except OSError:
                        pass
            threading.Thread(target=scraper, daemon=True).start()
        _, status, ru = os.wait4(p.pid, 0)
        stop.set()
        p.stderr.read()
        p.returncode = os.waitstatus_to_exitcode(status)
        with open(out) as f:
            n = sum(1 for _ in f)
        return ru.ru_utime + ru.ru_stime, n, ru.ru_maxrss


recv_log = tempfile.NamedTemporaryFile(delete=False)
recv = subprocess.Popen(["/usr/bin/python3", RECEIVER, "--log", recv_log.name], stdout=subprocess.PIPE, text=True)
port = int(recv.stdout.readline())
tdir = tempfile.mkdtemp()
try:
    cases = [("none", [], False),
             ("prometheus", ["--prometheus", "127.0.0.1:0"], True),
             ("textfile", ["--prometheus-textfile", tdir], False),
             ("otlp", ["--otlp", f"http://127.0.0.1:{port}", "--otlp-interval", "1"], False),
             ("all", ["--prometheus", "127.0.0.1:0", "--prometheus-textfile", tdir,
                      "--otlp", f"http://127.0.0.1:{port}", "--otlp-interval", "1"], True)]
    base = None
    for name, extra, scrape in cases:
        cpu, n, rss = run(extra, scrape)
        per = cpu / n * 1e6
        base = per if base is None else base
        print(f"tool_cpu_us_per_sample_{name}: {per:.0f} (added {per - base:.0f}; {n} samples at -i 0.1, "
              f"max RSS {rss} KiB)")
finally:
    recv.terminate()
    recv.wait()
    os.unlink(recv_log.name)
    for f in os.listdir(tdir):
        os.unlink(os.path.join(tdir, f))
    os.rmdir(tdir)
