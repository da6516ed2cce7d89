"""helpers.py - small helpers: mean (without the statistics module's import cost),
round_memory (the C library's rt_round_memory_mib), aggregate_stats over runs, one CSV row
as the Python tracker writes it (QUOTE_NONNUMERIC), the Python tracker 0.5's cleanup_files
and cleanup_processes, and its is_psutil_available, is_procfs_available and
get_tracker_implementation (from _tracker_choice.py, imported when first asked for)."""

from __future__ import annotations



def mean(values) -> float:
    """The arithmetic mean; None values are skipped (a figure the machine did not report).

    >>> mean([1, 2, 3, 4])
    2.5
    >>> mean([1.0, None, 3.0])
    2.0
    """
    total = 0.0
    n = 0
    for v in values:
        if v is None:
            continue
        total += v
        n += 1
    if n == 0:
        raise ValueError("mean requires at least one data point")
    return total / n


def round_memory(mb: float | None = None, mib: float | None = None) -> int:
    """Rounds an amount of memory in MiB up to 128, 256, 512, 1024 or 2048, above that to
    whole GiB (in MiB). Accepts the amount as mb (the 0.4 name) or mib.

    >>> round_memory(68)
    128
    >>> round_memory(896)
    1024
    >>> round_memory(mb=3863)
    4096
    >>> round_memory(mib=2049)
    3072
    """
    from ._native import lib

    value = mb if mb is not None else mib
    if value is None:
        raise TypeError("round_memory() needs an amount in MiB")
    return int(lib.rt_round_memory_mib(float(value)))


def aggregate_stats(stats: list[dict[str, dict]]) -> dict[str, dict]:
    """Combines the statistics of several runs (as ResourceTracker.stats returns them): the
    mean of every "mean" and "duration", the largest of every "max" and "sum".

    >>> a = {'cpu_usage': {'mean': 1.5, 'max': 2.0}, 'memory': {'mean': 100, 'max': 150}}
    >>> b = {'cpu_usage': {'mean': 2.5, 'max': 3.0}, 'memory': {'mean': 200, 'max': 250}}
    >>> aggregate_stats([a, b])
    {'cpu_usage': {'max': 3.0, 'mean': 2.0}, 'memory': {'max': 250, 'mean': 150.0}}
    """
    largest: dict[str, dict] = {}
    averaged: dict[str, dict[str, list]] = {}
    order: list[str] = []
    for run in stats or []:
        for column, aggs in run.items():
            if column not in largest:
                largest[column] = {}
                averaged[column] = {}
                order.append(column)
            for agg, value in aggs.items():
                if agg in ("mean", "duration"):
                    averaged[column].setdefault(agg, []).append(value)
                elif agg in ("max", "sum"):
                    if agg not in largest[column] or value > largest[column][agg]:
                        largest[column][agg] = value
                else:
                    raise ValueError(f"Unsupported aggregation type: {agg}")
    result = {}
    for column in order:
        out = dict(largest[column])
        for agg, values in averaged[column].items():
            out[agg] = sum(values) / len(values)
        result[column] = out
    return result


def render_csv_row(row, quoting: int | None = None) -> bytes:
    """One CSV row (with its newline) as bytes; strings quoted, numbers not, by default.

    >>> render_csv_row(["timestamp", "pid"])
    b'"timestamp","pid"\\n'
    >>> render_csv_row([1741785685.676, 42, None])
    b'1741785685.676,42,""\\n'
    """
    import csv
    from io import StringIO

    buf = StringIO(newline="")
    csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC if quoting is None else quoting,
               lineterminator="\n").writerow(row)
    return buf.getvalue().encode("utf-8")


def __getattr__(name):
    """0.5's is_psutil_available, is_procfs_available and get_tracker_implementation, which
    live in _tracker_choice.py (imported when first asked for)."""
    if name in ("is_psutil_available", "is_procfs_available", "get_tracker_implementation"):
        from . import _tracker_choice

        return getattr(_tracker_choice, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cleanup_files(files) -> None:
    """Removes each of the files, ignoring any error (a file already gone).

    >>> cleanup_files(["/nonexistent/file"])
    """
    import os

    for f in files:
        try:
            os.unlink(f)
        except Exception:
            pass


def cleanup_processes(processes) -> None:
    """Ends each multiprocessing.Process: terminate, then kill when it still lives after 1 s,
    then close; errors ignored."""
    for p in processes:
        for end in ("terminate", "kill"):
            try:
                if p.is_alive():
                    getattr(p, end)()
                    p.join(timeout=1.0)
            except Exception:
                pass
        try:
            p.close()
        except Exception:
            pass
