"""_frame_io.py - TinyDataFrame's CSV reading and writing, printing and statistics, imported
when first used (tiny_data_frame.py keeps the column store)."""

from __future__ import annotations


def _logger():
    from logging import getLogger

    return getLogger("resource_tracker.tiny_data_frame")


def read_csv(path: str, retries: int, retry_delay: float) -> list[dict]:
    import csv
    from time import sleep

    last = None
    for attempt in range(retries + 1):
        try:
            with open(path, "r", newline="") as f:
                rows = list(csv.DictReader(f, quoting=csv.QUOTE_NONNUMERIC))
            for row in rows:
                if None in row:
                    raise ValueError("Corrupt CSV file with unknown column names.")
            return rows
        except Exception as e:  # a file being written, or not there yet
            last = e
            if attempt < retries:
                sleep(retry_delay)
                retry_delay *= 2
    raise RuntimeError(f"Failed to read CSV file after {retries + 1} attempts: {path}") from last


def render(df) -> str:
    """The first 10 rows as a table: numbers right-aligned, strings left-aligned."""
    head = f"TinyDataFrame with {len(df)} rows and {len(df.columns)} columns:\n"
    if len(df) == 0:
        return head + "Empty dataframe"
    shown = min(10, len(df))
    cells = [[str(v) for v in values[:shown]] for values in df._data]
    widths = [max([len(str(c))] + [len(x) for x in col]) for c, col in zip(df.columns, cells)]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(df.columns, widths)),
             "-+-".join("-" * w for w in widths)]
    for i in range(shown):
        parts = []
        for col, w in zip(cells, widths):
            parts.append(col[i].rjust(w) if _is_number(col[i]) else col[i].ljust(w))
        lines.append(" | ".join(parts))
    if len(df) > shown:
        lines.append("..." + " " * (len(lines[0]) - 3))
    return head + "\n".join(lines)


def to_csv(df, csv_file_path: str | None = None, quote_strings: bool = True) -> str | None:
    """Writes the frame as CSV (header first) to csv_file_path, or returns it as a string.
    quote_strings: strings quoted and numbers not (QUOTE_NONNUMERIC), else quoted only
    where needed."""
    import csv
    from io import StringIO

    f = open(csv_file_path, "w", newline="") if csv_file_path else StringIO(newline="")
    try:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC if quote_strings else csv.QUOTE_MINIMAL)
        w.writerow(df.columns)
        for row in zip(*df._data):
            w.writerow(row)
        return None if csv_file_path else f.getvalue()
    finally:
        f.close()


def stats(df, specs) -> dict:
    """{column: {agg_name: value}} for every spec; a spec that fails is logged and left out."""
    out: dict[str, dict] = {}
    for spec in specs:
        name = spec.agg_name or spec.agg.__name__
        try:
            value = spec.agg(df[spec.column])
            if spec.round is not None:
                value = round(value, spec.round)
        except Exception as e:
            _logger().error(f"Error collecting statistic on {spec.column} with {name}: {e}")
            continue
        out.setdefault(spec.column, {})[name] = value
    return out

def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False
