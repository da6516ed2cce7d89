"""card_html.py - the HTML of the tracked_resources Metaflow card, from the step's artifact: the C
library's report of the step (ResourceTracker.report(integration="Metaflow"): the answer, charts
over time, the recommendation, the cheapest server and the cost when the Keeper lookup answers, or
one quiet line saying why it did not, "prices: offline (...)" without a network) with a Metaflow
section of its own put under the report's title: the step's status (Finished or Failed), how it
was tracked, its usage (the step's process tree and the machine: CPU, memory, GPU), the
recommendation as Metaflow's @resources (memory in MB, Metaflow's unit), and the last successful
runs of the step as a chart (inline SVG) and a table. One answer, one figure: the section's
figures of this run are the report's own (its answer's and its summary's, from the same
rt_tracker_summary, written as the report writes them; the memory is the answer's memory need,
named for what it is), and the page names its versions in one line (the report's footer: the
library, the Python package, Metaflow). One self-contained page: inline styles, scripts and SVG,
no request leaves it. render_card never raises: what cannot be made is left out with a note, and
without the report the section stands on a page of its own."""

import html
import math
import re
import traceback

MIB_TO_MB = 1048576 / 1000000  # Metaflow's @resources memory is MB (Kubernetes "M": 10^6 bytes)

_STYLE = """<style>
#metaflow{border:1px solid #d7dde5;border-radius:6px;padding:4px 14px 10px;margin:12px 0}
#metaflow h2{border:0;margin:6px 0 6px;font-size:18px}
#metaflow .status{display:inline-block;padding:1px 9px;border-radius:10px;font-size:13px;font-weight:600;
 vertical-align:2px;margin-left:8px;color:#fff;background:#2ca02c}
#metaflow .status.failed{background:#c62828}
#metaflow pre.resources{font-size:14px;display:inline-block;margin:4px 0;padding:6px 12px}
#metaflow .hist{display:flex;flex-wrap:wrap;gap:10px 24px;margin:6px 0 10px}
#metaflow .hist svg{max-width:100%;height:auto;font:11px system-ui,sans-serif}
#metaflow table.runs td,#metaflow table.runs th{text-align:right;padding:3px 0 3px 14px;white-space:nowrap}
#metaflow table.runs td:first-child,#metaflow table.runs th:first-child{text-align:left;padding-left:0}
#metaflow table.runs tr.this td{font-weight:600}
</style>
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body{{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#222;margin:0 auto;max-width:1200px;
padding:12px 24px}}h1{{font-size:22px}}table{{border-collapse:collapse;font-size:13px}}
th,td{{padding:3px 10px 3px 0;text-align:left;vertical-align:top}}.note{{color:#666;font-size:12px;margin:4px 0}}
pre{{background:#f5f7fa;border:1px solid #e1e4e8;padding:8px 10px;font-size:12px;white-space:pre-wrap}}
table.kv th{{color:#555;font-weight:600}}
</style>
{style}</head>
<body>
<header><h1>{title}</h1></header>
{body}
</body>
</html>
"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


# ---- figures out of the artifact, whichever column names (0.4's kB or 0.5's MiB) it has ----------

def _num(value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _stat(stats, column, agg):
    try:
        return _num(stats[column][agg])
    except (KeyError, TypeError):
        return None


def stat_memory_mib(stats, agg="max"):
    """A stats() dict's process memory in MiB: process_memory_mib (0.5) or process_memory (kB)."""
    v = _stat(stats, "process_memory_mib", agg)
    if v is not None:
        return v
    v = _stat(stats, "process_memory", agg)
    return v / 1024 if v is not None else None


def stat_vram_mib(stats, agg="max"):
    v = _stat(stats, "process_gpu_vram_mib", agg)
    return v if v is not None else _stat(stats, "process_gpu_vram", agg)


def resources_line(rec) -> str:
    """A recommend_resources dict (memory in MiB) as Metaflow's @resources, memory in MB."""
    cpu = int(rec.get("cpu") or 1)
    parts = [f"cpu={cpu}"]
    mib = _num(rec.get("memory"))
    if mib:
        parts.append(f"memory={int(math.ceil(mib * MIB_TO_MB - 1e-9))}")
    gpu = int(rec.get("gpu") or 0)
    if gpu > 0:
        parts.append(f"gpu={gpu}")
    return "@resources(" + ", ".join(parts) + ")"


def fmt(v, digits=2, unit=""):
    if v is None:
        return "\u2014"
    text = f"{v:.{digits}f}" if abs(v) < 1000 else f"{v:,.0f}"
    return text + unit


def fmt_mib(v):
    """MiB as the report writes them (fmt_scaled in report_tables.c): one decimal, a binary prefix
    that keeps the number under 1024, a whole number of MiB without decimals."""
    if v is None:
        return "\u2014"
    units = ("MiB", "GiB", "TiB", "PiB", "EiB")
    u = 0
    while abs(v) >= 1024 and u + 1 < len(units):
        v /= 1024
        u += 1
    return f"{v:.0f} {units[u]}" if u == 0 and v == math.floor(v) else f"{v:.1f} {units[u]}"


def fmt_secs(v):
    """Seconds as the report writes a duration (rpt_fmt_duration)."""
    if v is None or v < 0:
        return "\u2014"
    if v < 60:
        return f"{v:.1f} s"
    s = int(round(v))
    d, h, m = s // 86400, s // 3600 % 24, s // 60 % 60
    if d:
        return f"{d} d {h} h {m} min"
    return f"{h} h {m} min {s % 60} s" if h else f"{m} min {s % 60} s"


# ---- the history chart: one SVG per figure, a bar per run, oldest first, this run last -----------

def _bar_chart(chart_id, title, bars, fmt_value, width=360, height=170):
    """bars: [(label, value or None, is_this_run, failed)]; an SVG document fragment."""
    top, bottom, left, right = 36, 30, 6, 6
    plot_h = height - top - bottom
    n = max(len(bars), 1)
    slot = (width - left - right) / n
    vmax = max([v for _, v, _, _ in bars if v is not None] or [0]) or 1.0
    # a value's label may not reach the next bar's: smaller when it would (6 bars of "536.5 MiB")
    longest = max([len(fmt_value(v)) for _, v, _, _ in bars if v is not None] or [0])
    size = max(8, min(11, int((slot - 2) / (max(longest, 1) * 0.6))))  # a digit: about 0.6 em
    out = [f'<svg id="{chart_id}" class="hist-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}" '
           f'data-bars="{sum(1 for b in bars if b[1] is not None)}">',
           f'<text x="{left}" y="14" font-weight="600" fill="#222">{esc(title)}</text>',
           f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" stroke="#999"/>']
    for i, (label, value, this, failed) in enumerate(bars):
        x = left + i * slot + slot * 0.15
        w = slot * 0.7
        if value is not None:
            h = max(plot_h * value / vmax, 1.0)
            color = "#c62828" if failed else ("#d62728" if this else "#1f77b4")
            out.append(f'<rect class="bar" x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{w:.1f}" height="{h:.1f}" '
                       f'fill="{color}" fill-opacity="{0.95 if this else 0.7}"><title>{esc(label)}: '
                       f'{esc(fmt_value(value))}</title></rect>')
            out.append(f'<text x="{x + w / 2:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle" '
                       f'fill="#333"' + (f' font-size="{size}"' if size != 11 else "") +
                       f'>{esc(fmt_value(value))}</text>')
        out.append(f'<text x="{x + w / 2:.1f}" y="{height - 16}" text-anchor="middle" fill="#555">'
                   f'{esc(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def history_rows(stats, hist, run_ids, failed, run_id, own=None):
    """[(label, duration s, cpu mean, cpu peak, memory MiB, gpu peak, vram peak MiB, this, failed)]
    oldest first, this run last: each run's figures as the recommendation takes them. An earlier
    run's are its stats() (means and peaks of its samples, its memory the PSS peak); this run's
    are own, the answer's (answer_figures: the report shows the same), where it has them."""
    rows = []
    for i, s in reversed(list(enumerate(hist))):
        rid = run_ids[i] if i < len(run_ids) else f"run -{i + 1}"
        rows.append((f"run {rid}", s, False, False))
    rows.append((f"this run ({run_id})" if run_id else "this run", stats or {}, True, failed))
    out = []
    for label, s, this, bad in rows:
        row = [label, _stat(s, "timestamp", "duration"), _stat(s, "process_cpu_usage", "mean"),
               _stat(s, "process_cpu_usage", "max"), stat_memory_mib(s), _stat(s, "process_gpu_usage", "max"),
               stat_vram_mib(s), this, bad]
        if this and own:
            for k, key in ((1, "duration_secs"), (2, "cores_mean"), (3, "cores_peak"), (4, "memory_need_mib"),
                           (5, "gpu_peak"), (6, "vram_peak_mib")):
                if own.get(key) is not None:
                    row[k] = own[key]
        out.append(tuple(row))
    return out


def history_html(rows, n_hist, own=None):
    # the bars' labels: how many runs before this one (the table names them)
    short = [("this" if r[7] else f"\u2212{len(rows) - 1 - i}", r) for i, r in enumerate(rows)]
    charts = [
        _bar_chart("mf-hist-cpu", "CPU cores, mean", [(lab, r[2], r[7], r[8]) for lab, r in short],
                   lambda v: f"{v:.2f}"),
        _bar_chart("mf-hist-memory", "Memory need", [(lab, r[4], r[7], r[8]) for lab, r in short], fmt_mib),
        _bar_chart("mf-hist-duration", "Duration", [(lab, r[1], r[7], r[8]) for lab, r in short], fmt_secs),
    ]
    words = (own or {}).get("memory_words")
    this_words = ("this run's are the answer's below" + (f" (its memory need: {words})" if words else ""))
    out = [f'<h3>This step in the last {n_hist} successful run{"s" if n_hist != 1 else ""} and this one</h3>'
           '<p class="note" id="mf-history-note">\u22121 is the run before this one, \u22122 the one before it, '
           f'and so on. Each run\'s figures as the recommendation takes them: {esc(this_words)}; an earlier '
           'run\'s are the means and peaks of its samples, its memory need the PSS peak of its process tree '
           '(all that its stats keep).</p>'
           if n_hist else '<h3>This step over its runs</h3>']
    if n_hist == 0:
        out.append('<p class="note">No earlier successful run of this step with tracking data '
                   '(the history is read when the step ends, in the namespace it runs in); '
                   f'{esc(this_words)}.</p>')
    out.append('<div class="hist" id="mf-history">' + "".join(charts) + "</div>")
    out.append('<div class="wide"><table class="runs" id="mf-history-table"><tr><th>run</th><th>duration</th>'
               '<th>CPU cores, mean</th><th>CPU cores, peak</th><th>memory need</th><th>GPUs, peak</th>'
               '<th>VRAM peak</th></tr>')
    for label, dur, cm, cp, mem, gp, vr, this, _bad in reversed(rows):
        mark = ' class="this"' if this else ""
        out.append(f'<tr{mark}><td>{esc(label)}</td><td>{fmt_secs(dur)}</td>'
                   f'<td>{fmt(cm)}</td><td>{fmt(cp)}</td><td>{fmt_mib(mem)}</td><td>{fmt(gp)}</td>'
                   f'<td>{fmt_mib(vr) if vr else "0"}</td></tr>')
    out.append("</table></div>")
    return "\n".join(out)


# ---- the section ---------------------------------------------------------------------------------

def usage_html(own):
    """The step's usage (a kv table) in the report's own figures (own: answer_figures, the
    summary the report is made of), so that the section answers no question with a second
    figure: the process tree's cores and memory need are the answer's, the machine's those of
    the report's summary. None without them."""
    if not own:
        return None
    vcpus = own.get("vcpus")
    words = own.get("memory_words")
    rows = [
        ("duration", fmt_secs(own.get("duration_secs"))),
        ("Process CPU usage", f"{fmt(own.get('cores_mean'))} cores mean, {fmt(own.get('cores_peak'))} peak, "
                              f"{fmt_secs(own.get('cpu_secs'))} CPU time (the step's process and its children)"),
        ("memory need", fmt_mib(own.get("memory_need_mib")) + (f" ({words}): what the recommendation sizes from"
                                                               if words else "")),
        ("System CPU usage", f"{fmt(own.get('machine_cores_mean'))} cores mean, "
                             f"{fmt(own.get('machine_cores_peak'))} peak (the whole machine"
                             + (f", {vcpus:.0f} vCPUs)" if vcpus else ")")),
        ("system memory used", f"{fmt_mib(own.get('machine_memory_used_peak_mib'))} peak (the whole machine)"),
    ]
    if own.get("gpu_peak"):
        rows.append(("process GPU usage", f"{fmt(own['gpu_peak'])} GPUs peak, "
                                          f"{fmt_mib(own.get('vram_peak_mib'))} VRAM peak"))
    return ('<table class="kv" id="mf-usage">'
            + "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows) + "</table>")


def section_html(pathspec, failed, interval, version, usage, rec, rec_runs, history, notes):
    """The Metaflow section; version: the page's one version line when the report's footer
    does not carry it (None: it does)."""
    status = '<span class="status failed">Failed</span>' if failed else '<span class="status">Finished</span>'
    out = [_STYLE, '<section id="metaflow">',
           f'<h2>Metaflow step <code>{esc(pathspec)}</code>{status}</h2>',
           f'<p class="note">Tracked by <code>@track_resources</code> from <code>Metaflow</code>, a sample every '
           f'{esc(interval)} s, in the step\'s own process; its figures are those of the report\'s answer '
           f'and summary below.'
           + (" The step failed: the figures are those up to the failure." if failed else "")
           + (f' <span id="mf-versions">{esc(version)}.</span>' if version else "") + "</p>"]
    if usage:
        out.append(usage)
    if rec is not None:
        runs = f"this run and {rec_runs} earlier" if rec_runs else "this run"
        timed = rec.get("cpu_time") or {}
        cores_rule = ("cores: the fewest whose predicted duration is within "
                      f'{fmt(_num(timed.get("max_slowdown_pct")), 0)}% of this run\'s'
                      if timed.get("basis") == "duration" else "cores from the mean")
        out.append(f'<h3>Recommended for the next run</h3><pre class="resources" id="mf-resources">'
                   f'{esc(resources_line(rec))}</pre>'
                   + (f'<p id="mf-cpu-time">{esc(timed["words"])}</p>' if timed.get("words") else "")
                   + f'<p class="note">From {runs} by the rule of the recommendation below ({esc(cores_rule)}, '
                   f'memory from the peak need with headroom); memory in MB as Metaflow\'s @resources takes it '
                   f'({esc(fmt_mib(_num(rec.get("memory"))))}).</p>')
    if history:
        out.append(history)
    for note in notes:
        out.append(f'<p class="note mf-note">{esc(note)}</p>')
    out.append("</section>\n")
    return "\n".join(out)


def _versions():
    """(the C library's version, the Python package's, Metaflow's); "" for one not known."""
    lib = pkg = mf = ""
    try:
        from resource_tracker import __version__ as pkg
    except Exception:
        pass
    try:
        from resource_tracker._native import lib as native

        lib = native.rt_version().decode()
    except Exception:
        pass
    try:
        from metaflow import __version__ as mf
    except Exception:
        pass
    return str(lib), str(pkg), str(mf)


def version_line(versions) -> str:
    """The page's one version line: "resource-tracker 0.18.0 (library), Python package 0.12.0,
    Metaflow 2.19.38" (what is not known left out)."""
    lib, pkg, mf = versions
    parts = [f"resource-tracker {lib} (library)" if lib else "resource-tracker"]
    if pkg:
        parts.append(f"Python package {pkg}")
    if mf:
        parts.append(f"Metaflow {mf}")
    return ", ".join(parts)


_FOOTER = re.compile(r"<footer>resource-tracker [^;<]*;")


def footer_versions(report: str, line: str):
    """(the report with its footer's version the page's one version line, True), or (the report
    unchanged, False) when it has no such footer (the section then says the line)."""
    out, n = _FOOTER.subn(lambda m: f"<footer>{esc(line)};", report, count=1)
    return out, n == 1


def inject(report: str, section: str, pathspec: str, rec=None) -> str:
    """The report with the section under its header and its title the step's pathspec (the
    report's own Metaflow line is in MB too: rt_format_recommendation, 0.13)."""
    generic = "resource-tracker run"
    report = report.replace(f"<title>{generic} ", f"<title>{esc(pathspec)} ", 1)
    report = report.replace(f"<h1>{generic}</h1>", f"<h1>{esc(pathspec)}</h1>", 1)
    for anchor in ("</header>\n", "</header>"):
        at = report.find(anchor)
        if at >= 0:
            at += len(anchor)
            return report[:at] + section + report[at:]
    at = report.find(">", report.find("<body"))
    if at >= 0:
        return report[:at + 1] + section + report[at + 1:]
    return section + report


def page(title, body) -> str:
    return _PAGE.format(title=esc(title), style=_STYLE, body=body)


def error_page(pathspec, failed, what, error=None) -> str:
    """The card when there is no tracking data: why, and the error's details when known."""
    status = '<span class="status failed">Failed</span>' if failed else ""
    body = [f'<section id="metaflow"><h2>Metaflow step <code>{esc(pathspec)}</code>{status}</h2>',
            f'<p>{esc(what)}</p>']
    if isinstance(error, dict):
        body.append('<table class="kv">'
                    f'<tr><th>error type</th><td>{esc(error.get("error_type", ""))}</td></tr>'
                    f'<tr><th>error message</th><td>{esc(error.get("error_message", ""))}</td></tr></table>')
        if error.get("traceback") and error.get("traceback") != "-":
            body.append(f'<pre>{esc(error["traceback"])}</pre>')
    elif error is not None:
        body.append(f"<pre>{esc(error)}</pre>")
    body.append(f'<p class="note" id="mf-versions">{esc(version_line(_versions()))}.</p></section>')
    return page(f"{pathspec} \u2014 resource-tracker", "\n".join(body))


def render_card(task, artifact_name) -> str:
    """The card's HTML for a client Task (never raises)."""
    pathspec = str(getattr(task, "pathspec", "") or "")
    try:
        data = getattr(task.data, artifact_name)
    except Exception as e:
        return error_page(pathspec, False, f"The step has no artifact {artifact_name!r}: it was not tracked "
                                           f"or did not get as far as storing it.", f"{type(e).__name__}: {e}")
    try:
        return _render(pathspec, data)
    except Exception:
        failed = bool(data.get("step_failed")) if isinstance(data, dict) else False
        return error_page(pathspec, failed, "The card could not be made from the tracking data.",
                          traceback.format_exc())


def _render(pathspec, data) -> str:
    if not isinstance(data, dict):
        return error_page(pathspec, False, "The tracking artifact is not a resource-tracker record.", repr(data)[:2000])
    failed = bool(data.get("step_failed"))
    if data.get("error") or not data.get("tracker"):
        return error_page(pathspec, failed, "The resource tracker collected no data for this step (it did not "
                                            "start, or the step ended before its first sample):", data.get("error"))
    from resource_tracker import ResourceTracker

    notes = []
    tracker = ResourceTracker.from_snapshot(data["tracker"])
    # the stats and the run ids of the history go in pairs: a bad entry drops its own id only
    raw_hist = data.get("historical_stats") or []
    raw_ids = data.get("historical_runs") or []
    pairs = [(s, str(raw_ids[i]) if i < len(raw_ids) else f"run -{i + 1}")
             for i, s in enumerate(raw_hist) if isinstance(s, dict)]
    hist = [s for s, _ in pairs]
    run_ids = [r for _, r in pairs]
    parts = pathspec.split("/")
    run_id = parts[1] if len(parts) > 1 else None
    try:
        interval = tracker.interval
    except Exception:
        interval = "?"
    stats = rec = report = own = None
    try:
        stats = tracker.stats()
    except Exception as e:
        notes.append(f"The step's usage could not be summed up: {type(e).__name__}: {e}")
    try:
        from resource_tracker._analysis import answer_figures

        own = answer_figures(tracker)  # this run's row of the history: the answer's figures
    except Exception:
        own = None
    try:
        rec = tracker.recommend_resources(historical_stats=hist)
    except Exception as e:
        notes.append(f"No recommendation with the history ({type(e).__name__}: {e}); from this run alone.")
        try:
            rec = tracker.recommend_resources()  # the history's charts and table stay
        except Exception as e2:
            notes.append(f"No recommendation: {type(e2).__name__}: {e2}")
    history = None
    try:
        history = history_html(history_rows(stats, hist, run_ids, failed, run_id, own), len(hist), own)
    except Exception as e:
        notes.append(f"The history could not be drawn: {type(e).__name__}: {e}")
    try:
        report = str(tracker.report(integration="Metaflow", historical_stats=hist, status_failed=failed))
    except Exception as e:
        notes.append(f"The report of the step (charts over time, the cheapest server) could not be made: "
                     f"{type(e).__name__}: {e}")
    line = version_line(_versions())
    placed = False
    if report:
        report, placed = footer_versions(report, line)
    section = section_html(pathspec, failed, interval, None if placed else line, usage_html(own), rec, len(hist),
                           history, notes)
    if report:
        return inject(report, section, pathspec, rec)
    return page(f"{pathspec} \u2014 resource-tracker", section)
