"""Helpers for the report tests: headless Chromium renders a report to PNG and DOM behind a
local proxy that counts every request the page tries to make; Pillow looks at the pixels."""
import os
import re
import shutil
import socket
import subprocess
import threading
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class CountingProxy:
    """An HTTP proxy on 127.0.0.1 (port 0) that answers nothing and counts connections and the
    request lines it saw; stopped by close() (its own thread, its own socket)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests = []
        self.closed = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                except OSError:
                    first = "(nothing read)"
                self.requests.append(first)
                try:
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self):
        self.closed = True
        # a close alone does not wake a thread blocked in accept() on Linux: every render then
        # waited out the join's 5 s; a shutdown of the listening socket wakes it at once
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive(), "the proxy's thread did not end"


# Chromium's own background requests (component updater, network time, sign-in), which no
# flag turns off in headless mode; exact host names, so that a page's request to another host
# of the same company (fonts.googleapis.com) still counts.
BROWSER_HOSTS = {"update.googleapis.com", "accounts.google.com", "clients2.google.com", "redirector.gvt1.com",
                 "clients1.google.com", "content-autofill.googleapis.com", "optimizationguide-pa.googleapis.com",
                 "safebrowsingohttpgateway.googleapis.com", "edgedl.me.gvt1.com", "www.google.com"}

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
          "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
          "--disable-extensions", "--disable-sync", "--no-pings", "--disable-domain-reliability",
          "--disable-client-side-phishing-detection", "--metrics-recording-only",
          "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,Translate,MediaRouter"]


def request_host(line):
    """The host of a proxy request line ("GET http://h/p HTTP/1.1", "CONNECT h:443 HTTP/1.1")."""
    parts = line.split()
    if len(parts) < 2:
        return None
    target = parts[1]
    if "://" in target:
        target = target.split("://", 1)[1]
    return target.split("/", 1)[0].rsplit(":", 1)[0]


def render(html_path, png_path, width=1280, height=4000, extra=()):
    """Renders html_path with headless Chromium behind a counting proxy (loopback included;
    every host name but 127.0.0.1 unresolvable, so nothing could leave even past the proxy).
    Returns (dom, requests): the DOM after the page's scripts, and the request lines the proxy
    saw, less the browser's own (BROWSER_HOSTS). Writes the screenshot to png_path."""
    proxy = CountingProxy()
    try:
        args = [CHROMIUM] + _FLAGS + [
                f"--proxy-server=http://127.0.0.1:{proxy.port}", "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", f"--window-size={width},{height}",
                "--virtual-time-budget=10000", f"--screenshot={png_path}", "--dump-dom", *extra,
                "file://" + os.path.abspath(html_path)]
        p = subprocess.run(args, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, HOME=os.path.dirname(os.path.abspath(png_path))))
        assert p.returncode == 0, p.stderr[-2000:]
        time.sleep(0.2)  # a last request still in the proxy's hands
        return p.stdout, [r for r in proxy.requests if r and request_host(r) not in BROWSER_HOSTS]
    finally:
        proxy.close()


def body_attrs(dom):
    m = re.search(r"<body([^>]*)>", dom)
    assert m, "no <body> in the DOM"
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


def charts(dom):
    """Each drawn chart's attributes: id, ymax, series_max, plot (x, y, w, h in page pixels)."""
    out = []
    for m in re.finditer(r'<div class="chart" ([^>]*)>', dom):
        a = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))
        out.append({"id": a.get("id"), "ymax": float(a.get("data-ymax", "nan")),
                    "series_max": float(a.get("data-series-max", "nan")),
                    "plot": tuple(int(v) for v in a["data-plot"].split(",")) if "data-plot" in a else None})
    return out


def external_urls(html):
    """URLs the page could fetch: src=, href=, url(), @import, source maps; the licence
    comments' addresses are text, not fetched, and are not counted."""
    pats = [r'\b(?:src|href|action|poster|srcset)\s*=\s*["\']?\s*(?:https?:)?//',
            r'url\(\s*["\']?\s*(?:https?:)?//', r'@import', r'sourceMappingURL\s*=',
            r'\bfetch\s*\(', r'XMLHttpRequest\s*\(', r'new\s+WebSocket', r'<link\b', r'<iframe\b',
            r'<img\b']
    return [m.group(0) for p in pats for m in re.finditer(p, html)]


def plot_pixels(img, plot):
    """The RGB pixels of a chart's plot area as rows (list of lists)."""
    x, y, w, h = plot
    crop = img.crop((x, y, x + w, y + h)).convert("RGB")
    px = crop.load()
    return [[px[i, j] for i in range(w)] for j in range(h)]


def is_red(p):
    r, g, b = p
    return r > 150 and r - g > 25 and r - b > 25


# ---- the page looked at: boxes of the answer's parts, axis labels, overflow, print ----------

# Injected into a copy of a report (the page itself measures nothing): after the charts are drawn,
# writes the boxes the tests look at into <pre id="rt-measure"> as JSON, page coordinates.
_MEASURE = """<script>window.addEventListener('load',function(){setTimeout(function(){
function box(e){var r=e.getBoundingClientRect();return [r.left+scrollX,r.top+scrollY,r.width,r.height];}
function ink(e){var g=document.createRange();g.selectNodeContents(e);return box(g);}
var out={viewport:[innerWidth,innerHeight],scrollWidth:document.documentElement.scrollWidth,
 clientWidth:document.documentElement.clientWidth,ids:{},charts:[],texts:{}};
['answer','answer-used','answer-exit','answer-ask','answer-cost','answer-notes'].forEach(function(id){
 var e=document.getElementById(id);if(e)out.ids[id]=box(e);});
document.querySelectorAll('.chart-text').forEach(function(e){out.texts[e.id]=e.textContent;});
document.querySelectorAll('.chart').forEach(function(d){var c={id:d.id,block:box(d.parentNode),x:[],y:[]};
 d.querySelectorAll('.dygraph-axis-label').forEach(function(l){
  (l.classList.contains('dygraph-axis-label-x')?c.x:c.y).push({text:l.textContent,box:box(l),ink:ink(l),
   fs:parseFloat(getComputedStyle(l).fontSize)});});
 out.charts.push(c);});
var p=document.createElement('pre');p.id='rt-measure';p.textContent=JSON.stringify(out);document.body.appendChild(p);
},50);});</script>"""


# Chromium's window is at least 500 px wide: a narrower page is looked at in a frame of that width,
# whose measurements its parent copies out.
_FRAME = """<!DOCTYPE html><html><body style="margin:0"><iframe id="f" src="{src}" style="width:{w}px;height:{h}px;border:0">
</iframe><script>setInterval(function(){{try{{var p=document.getElementById('f').contentDocument.getElementById('rt-measure');
if(p&&!document.getElementById('rt-measure')){{var q=document.createElement('pre');q.id='rt-measure';
q.textContent=p.textContent;document.body.appendChild(q);}}}}catch(e){{}}}},50);</script></body></html>"""


def measure(html_path, work_dir, width=1400, height=900):
    """Renders a copy of the report with the measuring script at width x height (below 500 px in
    a frame that wide); returns what it measured (see _MEASURE) and the screenshot's path (the
    frame at the top left of a wider one)."""
    import html as html_mod
    import json
    text = open(html_path, encoding="utf-8").read()
    copy = os.path.join(work_dir, f"measured-{width}.html")
    with open(copy, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", _MEASURE + "</body>"))
    png = os.path.join(work_dir, f"measured-{width}.png")
    if width < 500:
        frame = os.path.join(work_dir, f"frame-{width}.html")
        with open(frame, "w", encoding="utf-8") as f:
            f.write(_FRAME.format(src=os.path.basename(copy), w=width, h=height))
        dom, _ = render(frame, png, 500, height, ["--allow-file-access-from-files"])
    else:
        dom, _ = render(copy, png, width, height)
    m = re.search(r'<pre id="rt-measure">(.*?)</pre>', dom, re.S)
    assert m, "the measuring script wrote nothing"
    return json.loads(html_mod.unescape(m.group(1))), png


def print_pdf(html_path, pdf_path, width=1400):
    """Prints the page with headless Chromium (its default paper, no header or footer), the window
    width x 900 (the width the charts were drawn at before printing)."""
    args = [CHROMIUM] + _FLAGS + ["--host-resolver-rules=MAP * ~NOTFOUND", f"--window-size={width},900",
                                  "--virtual-time-budget=10000", "--no-pdf-header-footer",
                                  f"--print-to-pdf={pdf_path}", "file://" + os.path.abspath(html_path)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, HOME=os.path.dirname(os.path.abspath(pdf_path))))
    assert p.returncode == 0 and os.path.getsize(pdf_path) > 0, p.stderr[-2000:]


def pdf_pages(pdf_path):
    """The pages of a PDF Chromium wrote: its /Type /Page objects (not /Pages)."""
    with open(pdf_path, "rb") as f:
        return len(re.findall(rb"/Type\s*/Page(?![s\w])", f.read()))


def page_data(html):
    """The report's data arrays T (seconds) and S (per series: low, mean, high per point)."""
    import json
    t = json.loads(re.search(r"var T=(\[.*?\]);", html).group(1))
    s = json.loads(re.search(r"var S=(\[.*?\]);\nvar CH=", html, re.S).group(1))
    return t, s
